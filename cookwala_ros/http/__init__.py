"""The Cookwala Core HTTP API over the executor service."""
