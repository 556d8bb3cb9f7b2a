"""Conversions between levels and formats, by family: file I/O (`io`), kernel generators
(`gen`), the lowering to synchronized streams (`sync`) and timeline exports (`export`)."""
