"""DAN passes: thin ModulePass wrappers and the pure algorithm cores they call."""
