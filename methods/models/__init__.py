"""Width-sliceable model families and the slicing machinery they share."""
