"""Context policies of the model path: model profiles, token counting, the token budget every
request is fitted into, large-payload summaries, and usage limits.

They act on what a model reads (capabilities and history processors of the model runner) and are
invisible to tools. Nothing here calls a tool or imports the agent or an interface.
"""
