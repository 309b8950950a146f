"""Authentication for the example web app: login sessions and their timeout."""
