"""The judge's client: AsyncOpenAI with structured output, its answers, retries, pacing, endpoints, context window,
tokens and prices."""
