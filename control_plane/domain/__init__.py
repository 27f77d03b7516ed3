"""The domain: the herder the HTTP handlers call, the decision native or emulated
(``capabilities``), the features, their ports and outcomes. Never imports Starlette or the settings."""
