"""`fedclaims audit`: the HAS-FL paper's recommended practices for any allocation policy."""
