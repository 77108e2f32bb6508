"""The PCWT weights-file format (pcwt.py), its test fixtures and weights/manifest.json."""
