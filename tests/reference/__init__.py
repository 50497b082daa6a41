"""Cross-checks of dpsql's calibrations, accountants and samplers against the field's reference
libraries (OpenDP, Google's dp-accounting), installed with ``pip install 'dpsql[reference]'``."""
