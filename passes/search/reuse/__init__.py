"""Reuse orders: groups of work that share inputs, found from the graph, run together
(`order`), priced by the reload traffic next-use eviction pays (`cost`)."""
