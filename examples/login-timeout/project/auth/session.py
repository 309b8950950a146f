"""Login sessions.

A session stays logged in while its user is active; after LOGIN_TIMEOUT_MINUTES without any
activity it expires and the user has to log in again.
"""

import time

# How long a session may be idle before the user is logged out.
LOGIN_TIMEOUT_MINUTES = 30


class Session:
    """One logged-in user."""

    def __init__(self, user, now=None):
        self.user = user
        self.last_seen = time.time() if now is None else now

    def touch(self, now=None):
        """Records activity: the idle time starts again."""
        self.last_seen = time.time() if now is None else now

    def idle_seconds(self, now=None):
        """Seconds since the last activity."""
        now = time.time() if now is None else now
        return now - self.last_seen

    def is_expired(self, now=None):
        """Whether the session has been idle for longer than the login timeout."""
        return self.idle_seconds(now) > LOGIN_TIMEOUT_MINUTES
