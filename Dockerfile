# The runner as a container image, for a Kubernetes Job or any engine that runs containers
# (docs/scale.md). Built from the package: the first stage packs this checkout exactly as
# `npm publish` would (npm pack), the second installs that tarball globally, with git and the
# util-linux tools the runner's containment uses. The image's command is the job entrypoint
# (scripts/action/job.sh): clone RUNNER_REPOSITORY, start or continue the run, `runner run`, report,
# push — the same steps as the GitHub Action (scripts/action/run.mjs).
#
#   docker build -t guarded-runner .
#   docker build --build-arg AGENT_PACKAGES="@openai/codex" -t guarded-runner-codex .
FROM node:22-bookworm-slim AS package
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm pack --silent --pack-destination /tmp && mv /tmp/guarded-runner-*.tgz /tmp/guarded-runner.tgz

FROM node:22-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates util-linux \
 && rm -rf /var/lib/apt/lists/*
# The agents' own programs, if the image should bring them (e.g. "@openai/codex" or "@anthropic-ai/claude-code").
ARG AGENT_PACKAGES=""
COPY --from=package /tmp/guarded-runner.tgz /tmp/guarded-runner.tgz
RUN npm install -g --no-audit --no-fund /tmp/guarded-runner.tgz $AGENT_PACKAGES && rm /tmp/guarded-runner.tgz && runner --version
COPY scripts/action/run.mjs scripts/action/pull-request.mjs scripts/action/job.sh /opt/runner/
# A user of its own with a writable home: the runner keeps its state in ~/.local/state/runner.
USER node
ENV HOME=/home/node
WORKDIR /home/node
ENTRYPOINT ["/opt/runner/job.sh"]
