"""Daisen's views: the Overview of per-component metrics, the Component and Task views.

``metrics`` (with ``binning`` and ``windows``) computes what the charts show from the
trace's metric pyramid and task rows; ``placement`` puts Gantt bars on rows
(up-floating, nested); ``figures`` draws them; ``views`` assembles a page's content;
``namefilter`` is the Overview's safe regex filter; ``exporting`` the CSV downloads.
"""
