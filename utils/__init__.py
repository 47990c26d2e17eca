"""Sleuth utilities: one concern per module, each usable on its own."""
