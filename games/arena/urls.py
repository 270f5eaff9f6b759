from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from games.arena.ratings import bot_views, leaderboard
from games.arena.ratings.bot_pages import bot_page, person_page
from games.arena.web import accounts, api, exchange, tournaments, views

urlpatterns = [
    path("", views.lobby, name="lobby"),
    path("tables/new/<slug:game>/", views.create_table, name="create_table"),
    path("play/<slug:game>/", views.play_bot, name="play_bot"),
    path("rules/<slug:game>/", views.rules_page, name="rules"),
    path("protocols/<slug:game>/", views.protocol_page, name="protocol"),
    path("matches/<int:match_id>/", views.match_page, name="match"),
    path("matches/<int:match_id>/join/<int:index>/", views.join, name="join"),
    path("matches/<int:match_id>/leave/", views.leave, name="leave"),
    path("matches/<int:match_id>/export/<slug:fmt>/", exchange.export, name="export"),
    path("matches/<int:match_id>/elsewhere/", exchange.external_replay, name="external_replay"),
    path("import/<slug:game>/", exchange.import_log, name="import_log"),
    path("history/", views.history, name="history"),
    path("tournaments/", tournaments.tournament_list, name="tournaments"),
    path("tournaments/new/", tournaments.tournament_new, name="tournament_new"),
    path("tournaments/<int:tournament_id>/", tournaments.tournament_page, name="tournament"),
    path("tournaments/<int:tournament_id>/cancel/", tournaments.tournament_cancel, name="tournament_cancel"),
    path("tournaments/<int:tournament_id>/signup/", tournaments.tournament_signup, name="tournament_signup"),
    path("tournaments/<int:tournament_id>/withdraw/", tournaments.tournament_withdraw, name="tournament_withdraw"),
    path("tournaments/<int:tournament_id>/enter/", tournaments.tournament_enter_bot, name="tournament_enter_bot"),
    path("leaderboard/<slug:game>/", leaderboard.leaderboard, name="leaderboard"),
    path("nickname/", views.nickname, name="nickname"),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", views.signup, name="signup"),
    # The account: email, password change and reset (Django's views, games/arena/web/accounts.py), deletion.
    path("accounts/", accounts.account, name="account"),
    path("accounts/delete/", accounts.delete, name="account_delete"),
    path("accounts/password/", accounts.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/password/reset/", accounts.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("accounts/password/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(),
         name="password_reset_confirm"),
    path("accounts/password/reset/done/", auth_views.PasswordResetCompleteView.as_view(),
         name="password_reset_complete"),
    path("bots/", bot_views.bot_list, name="bots"),
    path("bots/<int:bot_id>/", bot_page, name="bot_page"),
    path("people/<str:username>/", person_page, name="person_page"),
    path("bots/<int:bot_id>/test/", bot_views.bot_test, name="bot_test"),
    path("bots/<int:bot_id>/delete/", bot_views.bot_delete, name="bot_delete"),
    path("bots/<int:bot_id>/key/", bot_views.bot_key, name="bot_key"),
    path("bots/<int:bot_id>/shared/", bot_views.bot_share, name="bot_share"),
    path("bots/api-token/", bot_views.api_token, name="api_token"),
    # The JSON API (django-ninja, namespace "api"): /api/matches/, /api/matches/<id>/,
    # /api/matches/<id>/replay/, /api/openapi.json and the docs page /api/docs.
    path("api/", api.api.urls),
    path("api/docs/", RedirectView.as_view(url="/api/docs", permanent=True)),
    path("api/docs/swagger", api.swagger_page, name="api_swagger"),
]
