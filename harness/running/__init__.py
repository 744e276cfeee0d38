"""Planning runs, fetching data, executing them and keeping their records (the store, keys, numerics)."""
