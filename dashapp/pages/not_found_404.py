"""Any unknown path: a friendly page instead of a bare 404."""
import dash
from dash import dcc, html

from .. import widgets


def layout(**_query):
    return html.Div([widgets.messages(["There is no such page."]),
                     dcc.Link("Go to the traces", href="/")])


# Registered after ``layout`` exists: this module is imported, not scanned by Dash.
dash.register_page(__name__, path="/404", title="GPUscope: no such page", name="Not found",
                   layout=layout)
