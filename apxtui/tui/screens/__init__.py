"""The explorer's screens: explorer, kernels, capture, checkpoint, profile, plus modals."""
