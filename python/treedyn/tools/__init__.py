"""Tools on top of the library: the command line (``treedyn``), plots and GIFs, the peers
(Pinocchio, MuJoCo) as oracles and baselines, and Dask-distributed batches."""
