"""The `repute` command line (`python -m service` is the same). Each command is thin: it parses options
and calls a service module. What every command shares is in `base`; the commands, by what they are about,
in the other modules, which register themselves on `app` when imported."""

from importlib import import_module

from service.cli.base import USAGE, app, err

# In the order `repute --help` lists their commands.
COMMAND_MODULES = ("server", "runs", "offline", "reputation", "statements", "admin")
for _module in COMMAND_MODULES:
    import_module(f"service.cli.{_module}")

__all__ = ["app", "main"]


def main() -> None:
    from service.settings import InvalidSetting

    try:
        app()
    except InvalidSetting as exc:  # read by whichever command needs the settings, before it does anything
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(USAGE) from None
