"""URLs: the lobby, tables, history and replays, the JSON API, accounts and the admin."""
from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("games.arena.urls")),
]
