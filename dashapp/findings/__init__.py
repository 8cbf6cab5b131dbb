"""The Findings page's parts: the analysis report per trace version (``reports``), each
finding's evidence as links into the app (``evidence``) and the report's charts
(``figures``), all usable without a server."""
