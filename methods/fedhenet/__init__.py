"""FedHENet: frozen backbone features, a closed-form ROLANN output layer and CKKS-summed statistics."""
