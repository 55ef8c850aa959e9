"""Floors: serving."""
