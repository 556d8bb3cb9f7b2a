"""Lower bounds on every metric the replay reports: memory (`memory`), time (`time`), and
the report that sets them beside a plan's metrics (`report`)."""
