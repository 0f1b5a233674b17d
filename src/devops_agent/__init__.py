"""DevOps Agent: an AI operations agent that investigates with tools and works offline with runbooks."""

__version__ = "0.1.0"
