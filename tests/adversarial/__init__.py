"""Candidates that try to fool or break the evaluator, and the verdicts they must get."""
