"""Connector configurations: validate, create, update, PATCH."""
