"""Common base of the pydantic specs: frozen, no extra fields, our own errors."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo

from ..errors import InvalidValueError

__all__ = ["Spec", "SpecValidationError", "describe_validation_error", "field_name"]


def field_name(info: ValidationInfo) -> str:
    """The name of the field a field validator checks (pydantic always sets it there)."""
    assert info.field_name is not None
    return info.field_name


def describe_validation_error(exc: ValidationError) -> list[tuple[str, Any, str]]:
    """(field path, offending value, what is allowed) for each problem pydantic found."""
    problems = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(part) for part in err["loc"]) or "(root)"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field (not allowed)"
        elif err["type"] == "missing":
            message = "required field is missing"
        problems.append((field, err.get("input"), message))
    return problems


def _short(value: Any) -> str:
    """``repr(value)``, cut to 100 characters (a whole config dict helps nobody)."""
    text = repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


class SpecValidationError(InvalidValueError):
    """A spec (Model, Accelerator, ...) was given invalid fields."""

    def __init__(self, spec: str, problems: list[tuple[str, Any, str]]):
        self.spec, self.problems = spec, problems
        parts = [
            f"{spec}.{field}: {message}" + ("" if message.startswith("required") or "unknown field" in message
                                           or field == "(root)" else f" (got {_short(value)})")
            for field, value, message in problems
        ]
        field, value, _ = problems[0]
        self.field, self.value = f"{spec}.{field}", value
        self.allowed = problems[0][2]
        Exception.__init__(self, "; ".join(parts))


class Spec(BaseModel):
    """Base of every spec: immutable, unknown fields rejected, errors of our own hierarchy."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, ser_json_inf_nan="strings")

    def __init__(self, **data: Any):
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise SpecValidationError(type(self).__name__, describe_validation_error(exc)) from None

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic refuses assignment to a frozen spec with its own ValidationError (or a bare
        # ValueError for an unknown name); users get ours, which also says what to do instead
        try:
            super().__setattr__(name, value)
        except ValueError:
            spec = type(self).__name__
            allowed = (f"specs are immutable; use .replace({name}=...) for a validated copy"
                       if name in type(self).model_fields else f"{spec} has no field {name!r}")
            raise SpecValidationError(spec, [(name, value, allowed)]) from None

    def replace(self, **changes: Any) -> Self:
        """A validated copy with some fields changed (``model_copy`` would skip validation)."""
        return type(self)(**{**{k: getattr(self, k) for k in type(self).model_fields}, **changes})
