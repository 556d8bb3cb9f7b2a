"""Transformations of kernels, by family: the DAN stages (`dan`), the baselines, the search
modes (`search`), offline packing, analyses, and what every pass shares (`pipeline`)."""
