"""`fedclaims verify --until-decided`: seeds added to undecided claims under a valid stopping rule."""
