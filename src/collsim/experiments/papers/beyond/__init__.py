"""Beyond the papers: every optical algorithm against the lower bound over the papers' grids."""
