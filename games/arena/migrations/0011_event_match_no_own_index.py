"""Event.match loses its own index: the unique (match, seq) index serves every lookup by match,
and the second index cost every event batch a page more to write.  The index is dropped by
name, as the database introspects it: ``AlterField`` would copy the whole event table on SQLite."""

import django.db.models.deletion
from django.db import migrations, models


def drop_match_index(apps, schema_editor):
    Event = apps.get_model("arena", "Event")
    for name in schema_editor._constraint_names(Event, ["match_id"], index=True, unique=False):
        schema_editor.execute(schema_editor._delete_index_sql(Event, name))


def add_match_index(apps, schema_editor):
    Event = apps.get_model("arena", "Event")
    schema_editor.add_index(Event, models.Index(fields=["match"], name="arena_event_match_id_idx"))


class Migration(migrations.Migration):

    dependencies = [
        ('arena', '0010_analysis'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_match_index, add_match_index)],
            state_operations=[
                migrations.AlterField(
                    model_name='event',
                    name='match',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                            related_name='events', to='arena.match'),
                ),
            ],
        ),
    ]
