"""One module per pane of the explorer."""
