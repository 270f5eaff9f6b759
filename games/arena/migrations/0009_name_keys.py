"""Look-alike keys of usernames and registered bots' names (games/arena/bots/names.py).

Existing rows get their keys in the order they were made.  A name that looks like one made
before it (``aIice`` after ``alice``), registered before this rule, is renamed by adding
``-<id>`` (its row's id; ``-<id>-2`` and so on if that too is taken): the older name keeps
it, and the look-alike can no longer pass for it.  A renamed person logs in under the new
username; each rename is logged (logger ``arena.names``) for the operator to pass on.
"""
import logging

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

log = logging.getLogger("arena.names")


def _free_name(name: str, pk: int, scope: str, held: set, limit: int, exists) -> str:
    """``name`` if none of its keys is ``held`` in ``scope``, else the first
    ``<name>-<pk>[-n]`` within ``limit`` characters that no key holds and no other row has
    (``exists(candidate)``)."""
    from games.arena.bots.names import name_keys

    candidate, n = name, 1
    while any((scope, k) in held for k in name_keys(candidate)) or (candidate != name and exists(candidate)):
        suffix = f"-{pk}" if n == 1 else f"-{pk}-{n}"
        candidate, n = name[:limit - len(suffix)] + suffix, n + 1
    return candidate


def _hold(NameKey, held: set, scope: str, name: str, **holder) -> None:
    from games.arena.bots.names import name_keys

    for key in sorted(name_keys(name)):
        held.add((scope, key))
        NameKey.objects.create(scope=scope, key=key, **holder)


def keys_for_existing_names(apps, schema_editor):
    User = apps.get_model(settings.AUTH_USER_MODEL)
    RegisteredBot = apps.get_model("arena", "RegisteredBot")
    NameKey = apps.get_model("arena", "NameKey")
    held: set = set()
    field = getattr(User, "USERNAME_FIELD", "username")
    limit = User._meta.get_field(field).max_length
    for user in User.objects.order_by("pk"):
        name = getattr(user, field)
        free = _free_name(name, user.pk, "user", held, limit,
                          lambda c: User.objects.filter(**{field: c}).exists())
        if free != name:
            log.warning("username %r looks like an older one: renamed %r", name, free)
            User.objects.filter(pk=user.pk).update(**{field: free})
        _hold(NameKey, held, "user", free, user_id=user.pk)
    for bot in RegisteredBot.objects.order_by("pk"):
        scope = f"bot:{bot.game}"
        free = _free_name(bot.name, bot.pk, scope, held, 40,
                          lambda c: RegisteredBot.objects.filter(game=bot.game, name=c).exists())
        if free != bot.name:
            log.warning("bot name %r (%s) looks like an older one: renamed %r", bot.name, bot.game, free)
            RegisteredBot.objects.filter(pk=bot.pk).update(name=free)
        _hold(NameKey, held, scope, free, bot_id=bot.pk)


class Migration(migrations.Migration):

    dependencies = [
        ('arena', '0008_match_pace_think_time'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='NameKey',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('scope', models.CharField(max_length=40)),
                ('key', models.CharField(max_length=64)),
                ('bot', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='arena.registeredbot')),
                ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'constraints': [
                    models.UniqueConstraint(fields=('scope', 'key'), name='unique_name_key'),
                    models.CheckConstraint(condition=models.Q(('user__isnull', True), ('bot__isnull', True), _connector='XOR'), name='name_key_one_holder'),
                ],
            },
        ),
        migrations.RunPython(keys_for_existing_names, migrations.RunPython.noop),
    ]
