"""Frontends (graph and plan files -> arrays -> IR) and backends (IR -> plan files)."""
