from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('arena', '0007_api_tokens'),
    ]

    operations = [
        migrations.AddField(
            model_name='match',
            name='pace_s',
            field=models.FloatField(default=0.0),
        ),
        migrations.AddField(
            model_name='match',
            name='think_s',
            field=models.FloatField(blank=True, null=True),
        ),
    ]
