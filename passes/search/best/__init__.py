"""`dan-best`: a portfolio of orders and layouts for one objective (`search`, the core),
run on the shared executor, and the optional CP-SAT rescheduling (`exact_schedule`)."""
