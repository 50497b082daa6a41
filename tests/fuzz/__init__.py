"""Whole-query differential fuzzing of dpsql (Hypothesis).

``tables`` generates adversarial neighbouring databases, ``queries`` SQL from the accepted
grammar (and just outside it), ``harness`` runs the production analyse → rewrite → backend
pipeline and checks each bounded query against its plan. The properties and why each
matters are in the docstrings of ``test_fuzz_queries`` and ``test_fuzz_spark``.
"""
