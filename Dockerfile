FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY . /app
RUN pip install . \
    && useradd --system --uid 10001 cce \
    && mkdir /data && chown cce /data
# Runtime working dir (a sqlite:///./cce.db store, if used, lands here).
WORKDIR /data
USER cce

EXPOSE 8000
ENTRYPOINT ["cce"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
