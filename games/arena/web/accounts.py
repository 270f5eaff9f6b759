"""A person's account: its page (email), password change and reset, and deletion.

Password change and reset are Django's own views (``django.contrib.auth.views``) with the
site's templates; what is added here is what they lack for a public server:

- every form that checks the current password (change, email, deletion) counts a wrong one
  against the login throttles (:mod:`games.arena.bots.throttle`: per address and per username), so
  a stolen session cannot be used to guess the password either;
- reset requests are limited per address and per email address typed
  (``ARENA_PASSWORD_RESETS_PER_HOUR``), counted before any mail is sent, whether or not the
  address belongs to an account (the page says the same either way).

Deleting an account keeps its matches: the person's seats and those of their registered bots
read "Deleted player" and "Deleted bot", with no link to anyone, and the forced moves' details
at those seats (which can quote a bot service's address or error text) are cleared, since a
seat of no identity shows its details to everyone.  The bots themselves (their names and
keys), the API token and the ratings go with the account.  Not while the person or one of
their bots holds a seat at a table that is waiting or playing: those matches are listed, to
be left or finished first.
"""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Q
from django.shortcuts import redirect, render
from django.urls import reverse_lazy

from games.arena.bots import throttle
from games.arena.models import Event, Match, Seat

#: What a deleted account's seats read in every match they played.
DELETED_PLAYER = "Deleted player"
DELETED_BOT = "Deleted bot"


def _address(request) -> str:
    return request.META.get("REMOTE_ADDR", "")


def _try_later(seconds: int, what: str) -> str:
    """``what`` and when to try again: seconds, or whole minutes from two minutes on."""
    return f"{what}; try again in {seconds} s." if seconds < 120 else f"{what}; try again in {-(-seconds // 60)} min."


def password_guess_refused(request) -> str | None:
    """Count a check of the logged-in user's password against the login throttles; the text
    to show when it is over them (nothing is checked then), else None.  Call
    :func:`password_guess_right` when the password turned out right."""
    address, username = _address(request), request.user.get_username().casefold()
    wait = throttle.LOGIN_BY_ADDRESS.attempt(address)
    if not wait:
        wait = throttle.LOGIN_BY_USERNAME.attempt(username)
        if wait:
            throttle.LOGIN_BY_ADDRESS.refund(address)
    return _try_later(wait, "Too many wrong passwords") if wait else None


def password_guess_right(request) -> None:
    """The password was right: that check does not count (only wrong guesses do)."""
    throttle.LOGIN_BY_ADDRESS.refund(_address(request))
    throttle.LOGIN_BY_USERNAME.refund(request.user.get_username().casefold())


class PasswordCheckForm(forms.Form):
    """A form confirmed with the account's current password (the deletion form's fields are
    prefixed ``delete-``: the account page holds two password fields)."""

    password = forms.CharField(label="Your password", strip=False,
                               widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))

    def __init__(self, user, *args, **kwargs):
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_password(self):
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError("That is not your password.")
        return password


class EmailForm(PasswordCheckForm):
    """The address a reset link goes to (optional), changed with the current password."""

    email = forms.EmailField(label="Email", required=False, max_length=254,
                             help_text="Only for resetting a forgotten password; nobody else sees it.")
    field_order = ["email", "password"]


def _checked(request, form) -> tuple[bool, str | None]:
    """Validate ``form`` (a :class:`PasswordCheckForm`) within the password throttles:
    (valid, the refusal text when over them)."""
    refused = password_guess_refused(request)
    if refused:
        return False, refused
    valid = form.is_valid()
    if "password" not in form.errors:
        password_guess_right(request)
    return valid, None


def holding_seats(user) -> list[Match]:
    """Tables waiting or playing where ``user`` or one of their registered bots holds a seat."""
    seats = Seat.objects.filter(Q(user=user) | Q(registered_bot__owner=user),
                                match__status__in=[Match.Status.OPEN, Match.Status.RUNNING])
    return list(Match.objects.filter(pk__in=seats.values("match_id")).order_by("pk"))


@transaction.atomic
def delete_account(user) -> None:
    """Delete ``user``, their bots, API token and ratings; their seats in past matches stay,
    as :data:`DELETED_PLAYER` / :data:`DELETED_BOT`, their forced moves' details cleared."""
    seats = list(Seat.objects.filter(Q(user=user) | Q(registered_bot__owner=user)).values_list("pk", "match_id", "index"))
    for start in range(0, len(seats), 200):
        chunk = seats[start:start + 200]
        which = Q()
        for _, match_id, index in chunk:
            which |= Q(match_id=match_id, seat=index)
        Event.objects.filter(which).exclude(detail="").update(detail="")
    Seat.objects.filter(user=user).update(display_name=DELETED_PLAYER, user=None, session_key="")
    Seat.objects.filter(registered_bot__owner=user).update(display_name=DELETED_BOT, registered_bot=None)
    user.delete()  # cascades to the bots, the API token and the ratings


@login_required
def account(request):
    """``/accounts/``: who you are, your email (for resets), links to change the password,
    and deleting the account."""
    status = 200
    refused = None
    form = EmailForm(request.user, initial={"email": request.user.email})
    if request.method == "POST":
        form = EmailForm(request.user, request.POST)
        valid, refused = _checked(request, form)
        if valid:
            request.user.email = form.cleaned_data["email"]
            request.user.save(update_fields=["email"])
            messages.success(request, "Your email was saved." if request.user.email else "Your email was removed.")
            return redirect("account")
        status = 429 if refused else 200
    return render(request, "registration/account.html",
                  {"form": form, "throttled": refused, "delete_form": PasswordCheckForm(request.user, prefix="delete")}, status=status)


@login_required
def delete(request):
    """``/accounts/delete/`` (POST, with the password): delete the account (see the module's
    docstring for what stays); refused while the account holds seats at live tables."""
    if request.method != "POST":
        return redirect("account")
    form = PasswordCheckForm(request.user, request.POST, prefix="delete")
    busy = holding_seats(request.user)
    refused = None
    if not busy:
        valid, refused = _checked(request, form)
        if valid:
            delete_account(request.user)
            logout(request)
            messages.success(request, "Your account was deleted. Its matches stay, under an anonymous name.")
            return redirect("lobby")
    return render(request, "registration/account.html",
                  {"form": EmailForm(request.user, initial={"email": request.user.email}), "delete_form": form,
                   "busy": busy, "delete_throttled": refused, "deleting": True},
                  status=429 if refused else (409 if busy else 200))


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's password change, with wrong old passwords counted as failed logins."""

    success_url = reverse_lazy("password_change_done")

    def post(self, request, *args, **kwargs):
        refused = password_guess_refused(request)
        if refused:
            return self.render_to_response(self.get_context_data(form=self.get_form(), throttled=refused), status=429)
        form = self.get_form()
        if "old_password" not in form.errors:
            password_guess_right(request)
        return self.form_valid(form) if form.is_valid() else self.form_invalid(form)


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset request (a mail with a one-time link to each active account with that
    email), at most ``ARENA_PASSWORD_RESETS_PER_HOUR`` requests an hour per address and per
    email address typed; past them ``429`` and no mail."""

    success_url = reverse_lazy("password_reset_done")

    def post(self, request, *args, **kwargs):
        email = request.POST.get("email", "")[:254].strip().casefold()
        wait = throttle.RESETS_BY_ADDRESS.attempt(_address(request))
        if not wait and email:
            wait = throttle.RESETS_BY_EMAIL.attempt(email)
            if wait:
                throttle.RESETS_BY_ADDRESS.refund(_address(request))
        if wait:
            return self.render_to_response(
                self.get_context_data(form=self.get_form(), throttled=_try_later(wait, "Too many reset requests")),
                status=429)
        return super().post(request, *args, **kwargs)
