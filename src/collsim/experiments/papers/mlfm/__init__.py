"""The MLFM paper (seed 001): the congestion check and the all-to-all throughput of Fig. 3."""
