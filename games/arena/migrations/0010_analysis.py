"""Analyses of finished matches (games/arena/play/analyses.py): one row per part, pending until the
arena stores its result."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('arena', '0009_name_keys'),
    ]

    operations = [
        migrations.CreateModel(
            name='Analysis',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('part', models.PositiveIntegerField()),
                ('subject', models.JSONField()),
                ('result', models.JSONField(blank=True, null=True)),
                ('tries', models.PositiveSmallIntegerField(default=0)),
                ('error', models.CharField(blank=True, max_length=200)),
                ('match', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='analyses', to='arena.match')),
            ],
            options={
                'ordering': ['match', 'part'],
                'indexes': [models.Index(condition=models.Q(('result__isnull', True)), fields=['id'], name='analysis_pending')],
                'constraints': [models.UniqueConstraint(fields=('match', 'part'), name='unique_analysis_part')],
            },
        ),
    ]
