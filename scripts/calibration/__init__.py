"""Fits the roofline constants (weights/roofline.json) and writes docs/accuracy.md (scripts/calibrate.sh)."""
