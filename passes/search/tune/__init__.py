"""`tune`: the DAN pipeline over a small portfolio of settings, best plan kept."""
