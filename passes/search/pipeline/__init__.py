"""Software pipelining: orders that overlap repeated blocks of work across the pipes."""
