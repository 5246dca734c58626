"""One module per ``mnem`` subcommand: ``register(parser)`` and ``run(args, ctx)``."""
