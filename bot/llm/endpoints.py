"""What judge endpoints accept beyond OpenAI's own: a strict schema without the range keywords some decoders refuse
(said in words instead), and the one Azure OpenAI base URL this client can use."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

# Keywords Azure OpenAI, OpenAI's fine-tuned models and SGLang's outlines backend refuse in a strict schema.
RANGE_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "minLength",
                  "maxLength")
NAMED_SCHEMAS = ("properties", "patternProperties", "$defs", "definitions")  # objects whose keys are names
AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com")


def portable_schema(schema: Any) -> Any:
    """`schema` without the range keywords some strict decoders refuse, each range said in its property's description
    instead ("an integer from 0 to 2"). Replies are still validated against the rubric's full schema."""
    if isinstance(schema, list):
        return [portable_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in NAMED_SCHEMAS and isinstance(value, dict):  # a field may be named "minimum": keep every name
            kept[key] = {name: portable_schema(inner) for name, inner in value.items()}
        elif key not in RANGE_KEYWORDS:
            kept[key] = portable_schema(value)
    if (said := _range_in_words(schema)) is not None:
        kept["description"] = f"{schema['description']} ({said})" if schema.get("description") else said
    return kept


def _range_in_words(schema: dict[str, Any]) -> str | None:
    """The range keywords of one schema node in words ("an integer from 0 to 2", "a list of 1 to 3 items"), or None
    when it has none."""
    kind, unit = {"integer": ("an integer", ""), "number": ("a number", ""), "array": ("a list", " items"),
                  "string": ("a text", " characters")}.get(str(schema.get("type")), ("a value", ""))
    low = next((schema[key] for key in ("minimum", "minItems", "minLength") if key in schema), None)
    high = next((schema[key] for key in ("maximum", "maxItems", "maxLength") if key in schema), None)
    words = []
    if low is not None and high is not None:
        words.append(f"of {low} to {high}{unit}" if unit else f"from {low} to {high}")
    elif low is not None:
        words.append(f"of at least {low}{unit}")
    elif high is not None:
        words.append(f"of at most {high}{unit}")
    if "exclusiveMinimum" in schema:
        words.append(f"greater than {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema:
        words.append(f"less than {schema['exclusiveMaximum']}")
    return f"{kind} {', '.join(words)}" if words else None


def azure_v1_url(base_url: str | None) -> str | None:
    """The `/openai/v1/` base URL to use when `base_url` is an Azure OpenAI URL of another form (a deployment URL, or
    the resource's host alone), else None."""
    if not base_url:
        return None
    url = urlsplit(base_url)
    path = url.path.rstrip("/") + "/"
    if path.startswith("/openai/v1/") or not (on_azure(base_url) or "/openai/deployments/" in path):
        return None
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{(url.hostname or '').lower()}{port}/openai/v1/"


def on_azure(base_url: str | None) -> bool:
    """Whether `base_url` is on an Azure OpenAI resource's host."""
    host = urlsplit(base_url).hostname if base_url else None
    return host is not None and host.lower().endswith(AZURE_HOSTS)
