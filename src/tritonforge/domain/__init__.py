"""Types every stage shares: a candidate, the baseline marker, a verdict.

Kept apart from the plug-in families so that the store, reports and strategies can all
import them without importing each other.
"""
