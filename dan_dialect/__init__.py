"""The IR (`ir`: the `dan` and `dan_sync` dialects and their bridges to arrays) and the model
it means (`model`: graphs, plans, targets, replay, bounds). Nothing here imports a pass;
`model` imports nothing from `ir` (docs/ARCHITECTURE.md)."""
