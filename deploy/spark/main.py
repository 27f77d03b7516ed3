"""The file ``spark-submit`` runs for both jobs (it takes a Python file, not a module): the job's name first,
then the job's own options. The packages come from ``--py-files control_plane_jobs.zip``:

    spark-submit --master spark://host:7077 --py-files control_plane_jobs.zip \\
        --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 \\
        main.py offsets-reconcile --worker-properties connect.properties --out reports/offsets

``python -m spark_jobs.submit`` builds the zip and prints (or runs) this command line; see docs/spark-jobs/.
"""

import sys

from spark_jobs.submit import run_job

if __name__ == "__main__":
    sys.exit(run_job(sys.argv[1:]))
