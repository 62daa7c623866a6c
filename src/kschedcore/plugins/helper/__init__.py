"""Code several plugins share (upstream: plugins/helper)."""
