"""Helpers behind scripts/sweep and scripts/fct-slowdown (standard library; matplotlib for plots)."""
